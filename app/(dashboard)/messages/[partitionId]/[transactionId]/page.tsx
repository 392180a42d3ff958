import { connection } from 'next/server';
import { notFound } from 'next/navigation';
import { MessageView } from '@/components/pages/message-view';
import { getMessage } from '@/lib/broker/messages';
import { HttpError } from '@/lib/http/errors';

export default async function MessagePage({ params }: PageProps<'/messages/[partitionId]/[transactionId]'>) {
  await connection();
  const { partitionId, transactionId } = await params;
  try {
    return <MessageView initial={await getMessage(partitionId, decodeURIComponent(transactionId))} />;
  } catch (err) {
    if (err instanceof HttpError && err.status === 404) notFound();
    throw err;
  }
}
