/**
 * Words to the bot that are no instruction for the agent. Sent as one, a "thanks" under a finished
 * job would set the agent working again, and a "hi" in the bot's DM would start a job called "hi":
 * each spends one of the project's hourly agent uses.
 */

const GREETING =
  /^(?:hi|hello|hey|hiya|howdy|yo|good (?:morning|afternoon|evening))(?: (?:there|all|everyone|team|docs-agent))?$/;
const ACKNOWLEDGEMENT =
  /^(?:(?:thanks|thank you|thx|ty|tysm|cheers|much appreciated|appreciated)(?: (?:so much|very much|a lot|again|all|everyone|team))?|ok|okay|kk|cool|great|nice|awesome|perfect|lgtm|sounds good|got it|great work|nice work|good job)$/;
// Slack's emoji codes (`:+1:`, `:tada::skin-tone-2:`) and the punctuation around small talk.
const DECORATION =
  /:[a-z0-9_+'-]+:|\p{Extended_Pictographic}|[\u{1F3FB}-\u{1F3FF}]|\u{FE0F}|\u{200D}|[!.?,~…]/gu;

/** `greeting` (answered with help), `thanks` (left unanswered), or undefined for an instruction. */
export function smallTalkOf(text: string): 'greeting' | 'thanks' | undefined {
  const words = text.toLowerCase().replace(DECORATION, ' ').replace(/\s+/g, ' ').trim();
  if (words === '') return text.trim() === '' ? undefined : 'thanks'; // emoji alone: a 👍, a 🎉
  if (GREETING.test(words)) return 'greeting';
  if (ACKNOWLEDGEMENT.test(words)) return 'thanks';
  return undefined;
}

/** The slash command's own words, said to the bot in a mention or its DM rather than after `/docs-agent`. */
export function commandWordOf(text: string): 'status' | 'digest' | undefined {
  const match = /^(status|digest)[.!?]?$/i.exec(text.trim());
  return match ? (match[1]!.toLowerCase() as 'status' | 'digest') : undefined;
}
