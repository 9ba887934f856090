/**
 * In-flight deliveries of this replica, per receiver (webhook) and in all: a receiver that hangs
 * holds at most `perReceiver` of them, so every other receiver's deliveries still find room.
 */
export class ReceiverSlots {
  readonly #perReceiver: number;
  readonly #total: number;
  readonly #held = new Map<string, number>();
  #inUse = 0;

  constructor(options: { perReceiver: number; total: number }) {
    this.#perReceiver = options.perReceiver;
    this.#total = options.total;
  }

  /** Free slots in all. */
  get free(): number {
    return this.#total - this.#inUse;
  }

  get inUse(): number {
    return this.#inUse;
  }

  /** Takes a slot for `receiver`, or false when it (or the replica) has none left. */
  take(receiver: string): boolean {
    const held = this.#held.get(receiver) ?? 0;
    if (held >= this.#perReceiver || this.#inUse >= this.#total) return false;
    this.#held.set(receiver, held + 1);
    this.#inUse++;
    return true;
  }

  give(receiver: string): void {
    const held = (this.#held.get(receiver) ?? 0) - 1;
    if (held <= 0) this.#held.delete(receiver);
    else this.#held.set(receiver, held);
    this.#inUse--;
  }
}
