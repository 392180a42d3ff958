import { redirect } from 'next/navigation';

/** Every queue is listed on the Overview, with its health: /queues (a guessed address) goes there. */
export default function QueuesPage() {
  redirect('/');
}
