// Maps and sets with a bound, for what a process remembers (processMemory.ts).

/** A Map that keeps at most `bound` entries: a write makes its key the newest, the oldest go first. */
export class BoundedMap<K, V> extends Map<K, V> {
	constructor(private readonly bound: number) {
		super();
	}

	override set(key: K, value: V): this {
		super.delete(key);
		super.set(key, value);
		while (this.size > this.bound) this.delete(this.keys().next().value as K);
		return this;
	}
}

/** A Set that keeps at most `bound` values: an add makes its value the newest, the oldest go first. */
export class BoundedSet<T> extends Set<T> {
	constructor(private readonly bound: number) {
		super();
	}

	override add(value: T): this {
		super.delete(value);
		super.add(value);
		while (this.size > this.bound) this.delete(this.values().next().value as T);
		return this;
	}
}
