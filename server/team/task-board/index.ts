// The team task board (docs/SPEC.md §8): plain domain functions over the database, shared by
// the team_task_* tools and the browser (a person acts with Lead authority).
//
//   schema.ts        ids, statuses, actions, inputs and views (the one contract)
//   input.ts         checks that need no database (refusals persist nothing)
//   graph.ts         the pure dependency-cycle check
//   dependencies.ts  dependencies exist and stay a DAG
//   actions.ts       the per-action authority and preconditions
//   views.ts         reads: rows to views, readiness, write-scope warnings
//   commands.ts      create and update, serialised per team

export * from "./schema";
export { createTask, updateTask } from "./commands";
export { getTask, listTasks, tasksInProgressOf } from "./views";
