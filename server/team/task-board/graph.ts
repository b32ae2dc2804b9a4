// The dependency graph check, pure: the board loads the edges, this decides.

/** Task number → the numbers of the tasks it is blocked by. */
export type DependencyEdges = ReadonlyMap<number, readonly number[]>;

/**
 * With `task` now blocked by `deps`, the cycle this would close, as a path from `task` back
 * to `task` in which each task waits for the next; null when the graph stays acyclic.
 */
export function findCycle(edges: DependencyEdges, task: number, deps: readonly number[]): number[] | null {
  if (deps.includes(task)) return [task, task];
  const next = (n: number) => (n === task ? deps : (edges.get(n) ?? []));
  // Depth-first from the new blockers, remembering how each task was reached: reaching
  // `task` again closes a cycle, and the trail gives the path.
  const via = new Map<number, number>(deps.map((d) => [d, task]));
  const stack = [...deps];
  while (stack.length > 0) {
    const n = stack.pop()!;
    for (const m of next(n)) {
      if (m === task) {
        const back = [task, n];
        for (let cur = via.get(n)!; cur !== task; cur = via.get(cur)!) back.push(cur);
        back.push(task);
        return back.reverse();
      }
      if (!via.has(m)) {
        via.set(m, n);
        stack.push(m);
      }
    }
  }
  return null;
}
