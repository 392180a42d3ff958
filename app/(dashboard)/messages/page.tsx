import { connection } from 'next/server';
import type { MessageList } from '@/components/client/messages';
import { MessageBrowserView } from '@/components/pages/message-browser-view';
import { listMessages } from '@/lib/broker/list-messages';
import { MESSAGE_BROWSER_FILTERS, messageBrowserQuery } from '@/lib/dashboard/message-browser';
import { searchOf } from '@/lib/dashboard/query-string';

export const metadata = { title: 'Messages' };

export default async function MessagesPage({ searchParams }: PageProps<'/messages'>) {
  await connection();
  const search = (await searchParams) as Record<string, string | undefined>;
  const filters = Object.fromEntries(MESSAGE_BROWSER_FILTERS.map((k) => [k, search[k] || undefined]));
  try {
    const initial = (await listMessages(searchOf(messageBrowserQuery(filters)))) as unknown as MessageList;
    return <MessageBrowserView initial={initial} filters={filters} error={null} />;
  } catch (err) {
    // a malformed filter says what is wrong and lists nothing, rather than the unfiltered messages
    return <MessageBrowserView initial={null} filters={filters} error={(err as Error).message} />;
  }
}
