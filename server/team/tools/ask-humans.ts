import { z } from "zod";
import { AppError } from "../../errors";
import { defineTool, type ToolDefinition } from "../../runtime/tools";

// `ask_humans` (SPEC.md §17, Questions): every member may ask the team's people a question.
// The turn parks until one answers (runtime/waiting-calls.ts); the answer and the person's name
// are the result. Nothing runs in between: the runtime never calls `execute`.

export const ASK_HUMANS = "ask_humans";

export function createAskHumansTool(): ToolDefinition {
  return defineTool({
    name: ASK_HUMANS,
    description:
      "Ask the people of your team a question and wait for one of them to answer. Use it for a decision or a fact only a person has, not for anything you can find out yourself. Offer `choices` when the answer is one of a few options. Your turn pauses until someone answers; the result is their answer and their name.",
    input: z
      .object({
        question: z.string().min(1).max(2_000).describe("The question, complete on its own: people read it outside your transcript."),
        choices: z.array(z.string().min(1).max(200)).min(2).max(10).optional().describe("The answers to offer (people may still write another)."),
      })
      .strict(),
    output: z.object({ answer: z.string(), by: z.string() }),
    asksPeople: true,
    execute: () => Promise.reject(new AppError("TOOL_FAILED", "ask_humans is answered by people, not run")),
  });
}
