/** What the bench reads of a process, or of the machine, from /proc: CPU time and resident memory. */
import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) a process has used so far: fields 14 and 15 of /proc/PID/stat, in clock ticks of 1/100 s. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Seconds all cores have been busy (not idle nor waiting on I/O) since boot, from /proc/stat; the machine's CPU time. */
export function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) / 100;
}

/** A process's resident memory now (VmRSS), in KiB. */
export const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
