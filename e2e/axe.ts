import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";

// One axe-core run for every end-to-end check: WCAG 2.2 A and AA, and label-content-name-mismatch
// (WCAG 2.5.3, "label in name"), which axe ships as experimental and leaves off by default.

export async function axeViolations(page: Page) {
  // `options` replaces every option, `withTags` only adds runOnly: in this order.
  const { violations } = await new AxeBuilder({ page })
    .options({ rules: { "label-content-name-mismatch": { enabled: true } } })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])
    .analyze();
  return violations;
}
