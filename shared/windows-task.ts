/**
 * The Windows side of the native worker, as PowerShell text: where it is installed and how it runs at
 * start-up. Used by the worker's own `install`/`uninstall` and by the coordinator's installer script
 * (GET /worker-setup/desktop), so both set up the same thing. Pure functions, no I/O.
 *
 * Why a scheduled task and not a service: `sc.exe create` needs a program that speaks the Service
 * Control Manager protocol; node.exe (and a single-executable application) does not, so such a
 * service is killed after the start timeout (error 1053). A task at start-up as SYSTEM needs nothing
 * extra; its default execution limit of 72 h would kill long encodes, so it is set to zero, and a
 * failing exit is restarted every minute.
 */

export const WINDOWS = {
  /** Under %ProgramFiles%: the executable. */
  installFolder: 'Ripwerk',
  /** Under %ProgramData%: worker.json, worker.log and the state file. */
  dataFolder: 'Ripwerk',
  exeName: 'ripwerk-worker.exe',
  configName: 'worker.json',
  logName: 'worker.log',
  taskName: 'Ripwerk Worker',
  taskPath: '\\Ripwerk\\',
} as const;

/** A PowerShell single-quoted string literal. */
export function psQuote(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** Text for `powershell.exe -EncodedCommand`: base64 of UTF-16LE, so no quoting of the script is needed. */
export function psEncoded(script: string): string {
  return Buffer.from(script, 'utf16le').toString('base64');
}

/**
 * PowerShell lines that stop and remove an existing task, then register and start the worker's task.
 * Expects $exe, $config, $log and $dataDir to be set before.
 */
export function registerTaskLines(): string[] {
  return [
    ...unregisterTaskLines(),
    `$action = New-ScheduledTaskAction -Execute $exe -Argument ('--config "' + $config + '" --log-file "' + $log + '"') -WorkingDirectory $dataDir`,
    `$trigger = New-ScheduledTaskTrigger -AtStartup`,
    `$principal = New-ScheduledTaskPrincipal -UserId 'S-1-5-18' -LogonType ServiceAccount -RunLevel Highest`,
    `# ExecutionTimeLimit zero: no 72-hour limit that would kill a long encode. Restart after a failing exit.`,
    `$settings = New-ScheduledTaskSettingsSet -ExecutionTimeLimit ([TimeSpan]::Zero) -RestartCount 999 -RestartInterval (New-TimeSpan -Minutes 1) -AllowStartIfOnBatteries -DontStopIfGoingOnBatteries -StartWhenAvailable -MultipleInstances IgnoreNew`,
    `Register-ScheduledTask -TaskName $taskName -TaskPath $taskPath -Action $action -Trigger $trigger -Principal $principal -Settings $settings -Description 'Ripwerk native worker (transcode queue only)' | Out-Null`,
    `Start-ScheduledTask -TaskName $taskName -TaskPath $taskPath`,
  ];
}

/** PowerShell lines that stop and remove the task (no error when it does not exist). */
export function unregisterTaskLines(): string[] {
  return [
    `$taskName = ${psQuote(WINDOWS.taskName)}`,
    `$taskPath = ${psQuote(WINDOWS.taskPath)}`,
    `$old = Get-ScheduledTask -TaskName $taskName -TaskPath $taskPath -ErrorAction SilentlyContinue`,
    `if ($old) { Stop-ScheduledTask -TaskName $taskName -TaskPath $taskPath -ErrorAction SilentlyContinue; Unregister-ScheduledTask -TaskName $taskName -TaskPath $taskPath -Confirm:$false }`,
  ];
}

/**
 * PowerShell lines that let only SYSTEM and the Administrators read $config (it holds the broker
 * secret). SIDs instead of names: the group names differ by Windows language.
 */
export function protectConfigLines(): string[] {
  return [`& icacls.exe $config /inheritance:r /grant:r '*S-1-5-18:F' '*S-1-5-32-544:F' | Out-Null`, `if ($LASTEXITCODE -ne 0) { throw "icacls could not restrict access to $config" }`];
}

/** The PowerShell expression that is $true when the session runs elevated. */
export const PS_IS_ADMIN = `([Security.Principal.WindowsPrincipal][Security.Principal.WindowsIdentity]::GetCurrent()).IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)`;
