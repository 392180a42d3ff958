import { connection } from 'next/server';
import { notFound } from 'next/navigation';
import { MessageView } from '@/components/pages/message-view';
import { getMessage } from '@/lib/broker/messages';
import { plain } from '@/lib/exact-json';
import { messageTraces } from '@/lib/broker/traces';
import { HttpError } from '@/lib/broker/errors';

export async function generateMetadata({ params }: PageProps<'/messages/[partitionId]/[transactionId]'>) {
  return { title: `Message ${decodeURIComponent((await params).transactionId)}` };
}

export default async function MessagePage({ params }: PageProps<'/messages/[partitionId]/[transactionId]'>) {
  await connection();
  const { partitionId, transactionId } = await params;
  try {
    const id = decodeURIComponent(transactionId);
    const [message, traces] = await Promise.all([getMessage(partitionId, id), messageTraces(partitionId, id)]);
    return <MessageView initial={plain(message)} traces={traces} />;
  } catch (err) {
    if (err instanceof HttpError && err.status === 404) notFound();
    throw err;
  }
}
