import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";

// One axe-core run for every end-to-end check: WCAG 2.2 A and AA, and label-content-name-mismatch
// (WCAG 2.5.3, "label in name"), which axe ships as experimental and leaves off by default.

export async function axeViolations(page: Page, { coloursOnly = false }: { coloursOnly?: boolean } = {}) {
  // `options` replaces every option, `withTags` and `withRules` only add runOnly: in this order.
  const builder = new AxeBuilder({ page }).options({ rules: { "label-content-name-mismatch": { enabled: true } } });
  const { violations } = await (coloursOnly ? builder.withRules(COLOUR_RULES) : builder.withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])).analyze();
  return violations;
}

/**
 * The rules of those tags that read colours: all a second theme can change, as the themes differ
 * in colour tokens alone (components/themes.test.ts holds the stylesheets to that).
 */
const COLOUR_RULES = ["color-contrast", "link-in-text-block"];
