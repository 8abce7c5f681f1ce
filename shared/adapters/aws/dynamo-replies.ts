/**
 * The decider's answers to commands whose senders wait (sqs-mailbox.ts), kept a day: `REPLY#<id>` / `REPLY`, read
 * consistently by the waiting sender.
 */
import type { Reply } from '../../engine/run/decision.ts';
import type { Replies } from '../../ports/mailbox.ts';
import { ENTITY_ATTRIBUTE, stringItem } from './dynamo-codec.ts';
import { ExpressionScope } from './dynamo-expressions.ts';
import { conditionalPut, type DynamoContext, getItem } from './dynamo-ops.ts';
import { TTL_ATTRIBUTE } from './table-layout.ts';

const RETENTION_SECONDS = 86_400;
const replyKey = (id: string) => ({ PK: `REPLY#${id}`, SK: 'REPLY' });

export function createDynamoReplies(ctx: DynamoContext): Replies {
  return {
    async get(id) {
      const item = await getItem(ctx, replyKey(id));
      const text = item?.reply?.S;
      return text === undefined ? undefined : (JSON.parse(text) as Reply);
    },
    async put(id, reply) {
      const expiresAt = Math.floor(ctx.now().getTime() / 1000) + RETENTION_SECONDS;
      const item = {
        ...stringItem({ ...replyKey(id), [ENTITY_ATTRIBUTE]: 'reply', reply: JSON.stringify(reply) }),
        [TTL_ATTRIBUTE]: { N: String(expiresAt) },
      };
      await conditionalPut(ctx, item, new ExpressionScope(), undefined);
    },
  };
}
