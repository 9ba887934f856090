/**
 * In-flight attempts of this replica, per receiver (webhook) and in all, and a short line of
 * claimed deliveries waiting per receiver: a receiver that hangs holds at most `perReceiver`
 * slots, so every other receiver's deliveries still find room, and a busy one's next delivery
 * starts the moment a slot frees.
 */
export class ReceiverSlots<T> {
  readonly #perReceiver: number;
  readonly #total: number;
  readonly #maxWaiting: number;
  readonly #held = new Map<string, number>();
  readonly #lines = new Map<string, T[]>();
  #inUse = 0;
  #waiting = 0;

  /** `maxWaiting`: the longest line per receiver; beyond it `wait` refuses. */
  constructor(options: { perReceiver: number; total: number; maxWaiting: number }) {
    this.#perReceiver = options.perReceiver;
    this.#total = options.total;
    this.#maxWaiting = options.maxWaiting;
  }

  /** Room for more claimed deliveries (running or waiting) on this replica. */
  get room(): number {
    return this.#total - this.#inUse - this.#waiting;
  }

  /** Takes a slot for `receiver`, or false when it (or the replica) has none left. */
  take(receiver: string): boolean {
    const held = this.#held.get(receiver) ?? 0;
    if (held >= this.#perReceiver || this.#inUse >= this.#total) return false;
    this.#held.set(receiver, held + 1);
    this.#inUse++;
    return true;
  }

  /** Puts `item` in `receiver`'s line; false when the line is full. */
  wait(receiver: string, item: T): boolean {
    const line = this.#lines.get(receiver) ?? [];
    if (line.length >= this.#maxWaiting) return false;
    line.push(item);
    this.#lines.set(receiver, line);
    this.#waiting++;
    return true;
  }

  /** A finished attempt's slot: handed to the first in `receiver`'s line (returned), or freed. */
  release(receiver: string): T | undefined {
    const line = this.#lines.get(receiver);
    const next = line?.shift();
    if (next !== undefined) {
      this.#waiting--;
      if (line!.length === 0) this.#lines.delete(receiver);
      return next;
    }
    const held = (this.#held.get(receiver) ?? 0) - 1;
    if (held <= 0) this.#held.delete(receiver);
    else this.#held.set(receiver, held);
    this.#inUse--;
    return undefined;
  }

  /** Empties every line (at shutdown), returning what waited. */
  drain(): T[] {
    const all = [...this.#lines.values()].flat();
    this.#lines.clear();
    this.#waiting = 0;
    return all;
  }
}
