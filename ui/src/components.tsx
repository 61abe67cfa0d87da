import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { Missing } from './disc-support.js';
import { t } from './i18n/index.js';
import { relativeToMedia } from './media-path.js';

/** A quiet marker that what is shown is from an earlier, successful fetch. */
export function Stale({ stale, error }: { stale: boolean; error?: string | null }) {
  if (!stale) return null;
  return (
    <span class="stale" role="status" title={error ?? undefined}>
      {t('common.stale')}
    </span>
  );
}

/** The shown page's name: the section that carries it is the page's one main heading (h1). */
export const PageName = createContext<string>('');

export function Section({ title, stale, error, children, actions }: { title: string; stale?: boolean; error?: string | null; children: ComponentChildren; actions?: ComponentChildren }) {
  const Heading = useContext(PageName) === title ? 'h1' : 'h2';
  return (
    <section class="section" aria-label={title}>
      <header class="section-head">
        <Heading>{title}</Heading>
        <Stale stale={Boolean(stale)} error={error} />
        <div class="spacer" />
        {actions}
      </header>
      {children}
    </section>
  );
}

/** A button running an async action: disabled while it runs, the refusal shown beside it. */
export function Action({ label, run, kind, disabled, testId }: { label: string; run: () => Promise<unknown>; kind?: 'primary' | 'danger'; disabled?: boolean; testId?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <span class="action">
      <button
        type="button"
        class={kind ?? ''}
        data-testid={testId}
        disabled={busy || disabled}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            await run();
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        {label}
      </button>
      {error && (
        <span class="error" role="alert" translate={false}>
          {error}
        </span>
      )}
    </span>
  );
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';

/**
 * A modal dialog: focus moves into it and stays there (Tab and Shift+Tab wrap around), Escape
 * closes, and on closing the focus goes back to what had it before (the button that opened it).
 */
export function Dialog({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null);
  // The latest onClose without re-running the effect: a page that polls renders a new one every few
  // seconds, and focus must not jump back to the dialog's first control each time.
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    ref.current?.querySelector<HTMLElement>('input, select, button')?.focus();
    return () => {
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') return close.current();
      const box = ref.current;
      if (e.key !== 'Tab' || !box) return;
      const items = [...box.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null || el === document.activeElement);
      if (items.length === 0) return;
      const first = items[0];
      const last = items[items.length - 1];
      const inside = box.contains(document.activeElement);
      if (e.shiftKey && (document.activeElement === first || !inside)) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && (document.activeElement === last || !inside)) {
        e.preventDefault();
        first.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  return (
    <div class="backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class="dialog" role="dialog" aria-modal="true" aria-label={title} ref={ref}>
        <header class="section-head">
          <h2>{title}</h2>
          <div class="spacer" />
          <button type="button" aria-label={t('common.close')} onClick={onClose}>
            ×
          </button>
        </header>
        {children}
      </div>
    </div>
  );
}

export function Progress({ value, label }: { value: number; label: string }) {
  const v = Math.max(0, Math.min(100, value));
  return (
    <div class="progress" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(v)}>
      <div class="bar" style={{ width: `${v}%` }} />
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** What a worker lacks for a disc kind, with the command that adds it. */
export function MissingFix({ missing }: { missing: Missing }) {
  return (
    <span class="missing">
      {': '}
      {missing.text}
      {missing.command && <code>{missing.command}</code>}
    </span>
  );
}

/** A server path as the household reads it: relative to the media root, breaking only after a slash on a narrow screen; the full path on hover. */
export function PathText({ path, root }: { path: string; root: string | null }) {
  const rel = relativeToMedia(path, root);
  const shown = rel === '' ? t('media.root') : rel;
  const parts = shown.split('/');
  return (
    <span class="path" title={path} translate={false} data-testid="path">
      {parts.map((part, i) => (i < parts.length - 1 ? [part, '/', <wbr key={i} />] : part))}
    </span>
  );
}
