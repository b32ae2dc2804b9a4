import { z } from "zod";
import { AUDIT_EXPORT_MAX, AUDIT_PAGE, auditCsv, AuditEntrySchema, AuditFilterSchema, listAudit } from "../../people/audit";
import { personProcedure, router } from "../init";

// The audit log (SPEC.md §19): the instance owner reads every entry, a team owner their teams'
// (people/audit.ts decides; FORBIDDEN for anyone else). Read-only: nothing here writes.

const Before = z.string().regex(/^\d{1,19}$/).optional();

export const auditRouter = router({
  /** A page of entries, newest first; `before` pages back. */
  list: personProcedure
    .input(AuditFilterSchema.extend({ before: Before }))
    .output(z.object({ entries: z.array(AuditEntrySchema), nextBefore: z.string().nullable() }))
    .query(({ ctx, input }) => {
      const { before, ...filter } = input;
      return listAudit(ctx.db, ctx.person, filter, { before, limit: AUDIT_PAGE });
    }),

  /** The filtered entries as CSV (the newest AUDIT_EXPORT_MAX). */
  exportCsv: personProcedure
    .input(AuditFilterSchema)
    .output(z.object({ csv: z.string(), rows: z.number().int(), truncated: z.boolean() }))
    .query(async ({ ctx, input }) => {
      const page = await listAudit(ctx.db, ctx.person, input, { limit: AUDIT_EXPORT_MAX });
      return { csv: auditCsv(page.entries), rows: page.entries.length, truncated: page.nextBefore !== null };
    }),
});
