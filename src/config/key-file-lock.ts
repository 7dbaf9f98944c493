import { readFileSync, rmSync, writeFileSync } from 'node:fs';

const ATTEMPTS = 3;

/**
 * Runs `work` holding `<key file>.lock`, so that two key commands never rewrite the key file over
 * each other: the second would drop the key the first one is re-encrypting under. The lock holds the
 * holder's pid; a lock whose process is gone (killed mid-rotation) is taken over.
 */
export async function withKeyFileLock<T>(keyFile: string, work: () => Promise<T>): Promise<T> {
  const lockPath = `${keyFile}.lock`;
  acquire(lockPath, keyFile);
  try {
    return await work();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

function acquire(lockPath: string, keyFile: string): void {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      writeFileSync(lockPath, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = lockHolder(lockPath);
    if (holder === 'gone') continue;
    if (holder === 'unreadable') {
      throw new Error(
        `${lockPath} exists but names no process: if no other key command is running, remove it and run this one again.`,
      );
    }
    if (isRunning(holder))
      throw new Error(`Another key command (pid ${holder}) is changing ${keyFile}; run this one when it has finished.`);
    rmSync(lockPath, { force: true });
  }
  throw new Error(`Could not lock ${keyFile} (${lockPath} keeps coming back); run the command again.`);
}

/** The pid in the lock file; 'gone' once it was released. */
function lockHolder(lockPath: string): number | 'gone' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(lockPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : 'unreadable';
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
