/**
 * The native worker: the agent built into one file for desktops without containers (Windows). It has
 * no drives and consumes only the transcode queue; rip and title-scan commands are refused with this
 * text, which a failed job shows as its error.
 */
export function nativeWorkerRefusal(workerName: string): string {
  return (
    `Der Worker ${workerName} ist ein nativer Worker ohne Laufwerke und nimmt nur Transcode-Aufträge an (Warteschlange transcode); ` +
    `rippen und Titel lesen geht nur auf einem Worker mit Laufwerk. ` +
    `The worker ${workerName} is a native worker without drives and takes transcode jobs only (queue transcode); ` +
    `ripping and reading titles needs a worker with a drive.`
  );
}
