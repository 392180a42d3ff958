import { connection } from 'next/server';
import { notFound, redirect } from 'next/navigation';
import { transactionIdAt } from '@/lib/broker/messages';
import { messageHref } from '@/lib/dashboard/links';

/** A lease's span or a live event knows an offset, the Message page a transaction id: this joins the two. */
export default async function MessageAtOffsetPage({ params }: PageProps<'/messages/[partitionId]/at/[offset]'>) {
  await connection();
  const { partitionId, offset } = await params;
  const transactionId = await transactionIdAt(partitionId, offset);
  if (transactionId === null) notFound();
  redirect(messageHref(partitionId, transactionId));
}
