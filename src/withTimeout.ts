/** `work` did not settle within its time (it may still). */
export class TooLateError extends Error {
  constructor(late: string, ms: number) {
    super(`${late} within ${ms} ms`);
    this.name = 'TooLateError';
  }
}

export async function withTimeout<T>(work: Promise<T>, ms: number, late: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const tooLate = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TooLateError(late, ms)), ms);
  });
  try {
    return await Promise.race([work, tooLate]);
  } finally {
    clearTimeout(timer);
  }
}
