/**
 * `promise`'s value, or `late` once `ms` have passed without one: a wait with a ceiling (a shutdown's
 * grace, a last export, a hand-back before a crash log). The timer is cleared as soon as the promise
 * settles, and never holds the process open itself: what is waited for does, while it lives.
 */
export async function within<T, L>(promise: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const ceiling = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, ceiling]);
  } finally {
    clearTimeout(timer);
  }
}
