/**
 * The follower's agenda: which job is due next. A binary min-heap on the due time, so following
 * 10,000 jobs costs one timer and O(log n) per check, not one timer per job.
 *
 * Entries are never removed from the middle: rescheduling a job pushes a new entry with a new
 * ticket, and the stale one is dropped when it surfaces (the caller compares tickets).
 */

export interface DueEntry {
  at: number;
  jobId: string;
  ticket: number;
}

export class DueQueue {
  private readonly heap: DueEntry[] = [];

  get size(): number {
    return this.heap.length;
  }

  peek(): DueEntry | undefined {
    return this.heap[0];
  }

  push(entry: DueEntry): void {
    const heap = this.heap;
    heap.push(entry);
    let child = heap.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!before(entry, heap[parent] as DueEntry)) break;
      heap[child] = heap[parent] as DueEntry;
      child = parent;
    }
    heap[child] = entry;
  }

  pop(): DueEntry | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let parent = 0;
    for (;;) {
      const left = 2 * parent + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child =
        right < heap.length && before(heap[right] as DueEntry, heap[left] as DueEntry) ? right : left;
      if (!before(heap[child] as DueEntry, last)) break;
      heap[parent] = heap[child] as DueEntry;
      parent = child;
    }
    heap[parent] = last;
    return top;
  }

  clear(): void {
    this.heap.length = 0;
  }
}

const before = (a: DueEntry, b: DueEntry) => a.at < b.at || (a.at === b.at && a.ticket < b.ticket);
