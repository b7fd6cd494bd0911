// What a person does on the /play page, for the browser tests (play-page.test.js, and the page
// hosted on another origin in packed.test.js): click what the page marks as legal, deal a
// classic 3-seat match, play it out (reloading midway to check the seat comes back).
import assert from 'node:assert/strict';
import path from 'node:path';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Clicks the first thing the page marks as legal; false when nothing is marked yet. */
export async function clickLegal(page) {
  for (const selector of ['#choices .act.legal', '#hand button.card.legal:not([disabled])', '#actions .act.legal']) {
    const target = page.locator(selector).first();
    if ((await target.count()) > 0) {
      try {
        await target.click({ timeout: 2_000 });
        return true;
      } catch {
        return false; // redrawn meanwhile: look again
      }
    }
  }
  return false;
}

export const hand = (page) => page.$$eval('#hand [data-card]', (cards) => cards.map((c) => c.dataset.card));

/** Picks classic, 3 seats (the person and two heuristic bots) and deals; the match id. */
export async function deal(page) {
  await page.selectOption('#profile', 'CLASSIC');
  await page.selectOption('#seats', '3');
  assert.equal(await page.locator('#bots select').count(), 2);
  await page.click('#create');
  await page.waitForFunction(() => location.hash.length > 1 && !document.getElementById('table').hidden);
  const matchId = decodeURIComponent(new URL(page.url()).hash.slice(1));
  assert.ok(matchId);
  return matchId;
}

/** The page's click-to-prompt measures so far (a reload clears them). */
export const measures = (page) => page.evaluate(() => performance.getEntriesByName('click-to-prompt').map((e) => e.duration));

/**
 * Clicks what the page marks until the result shows; with `reload`, reloads at the person's
 * second prompt (at least four cards are left in the hand then) and checks that the same link
 * gives the same seat and hand, then screenshots the table once, when a card is marked. Adds the click-to-prompt measures
 * to `latencies`.
 */
export async function playOut(page, latencies, reload, { log = () => '', shots: output = null } = {}) {
  let clicks = 0;
  let reloaded = false;
  let shots = !reload || !output;
  for (const deadline = Date.now() + 240_000; ; ) {
    assert.ok(Date.now() < deadline, `the match did not end in time:\n${log().slice(-3000)}`);
    if ((await page.locator('#result h2').count()) > 0) break;
    const marked = await page.locator('#hand button.card.legal:not([disabled]), #actions .act.legal').count();
    if (reload && marked > 0 && clicks >= 1 && !reloaded && (await page.locator('#choices .act').count()) === 0) {
      reloaded = true;
      const before = await hand(page);
      const url = page.url();
      latencies.push(...(await measures(page)));
      await page.reload();
      await page.waitForFunction(() => document.querySelectorAll('#hand button.card.legal:not([disabled]), #actions .act.legal').length > 0, null, { timeout: 30_000 });
      assert.equal(page.url(), url);
      assert.deepEqual(await hand(page), before, 'the hand after the reload');
      continue;
    }
    if (reloaded && !shots && (await page.locator('#hand button.card.legal:not([disabled])').count()) > 0) {
      shots = true;
      await page.screenshot({ path: path.join(output, 'match-1366x900.png') });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: path.join(output, 'match-390x844.png'), fullPage: true });
      await page.setViewportSize({ width: 1366, height: 900 });
    }
    if (await clickLegal(page)) clicks += 1;
    else await sleep(20);
  }
  latencies.push(...(await measures(page)));
  return { clicks, reloaded };
}

