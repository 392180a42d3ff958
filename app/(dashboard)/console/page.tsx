import { connection } from 'next/server';
import { ConsoleView } from '@/components/pages/console-view';
import { consoleParams } from '@/lib/broker/pop-params';

export const metadata = { title: 'Try pop' };

export default async function ConsolePage({ searchParams }: PageProps<'/console'>) {
  await connection();
  const search = (await searchParams) as Record<string, string | undefined>;
  const initial = Object.fromEntries(
    Object.entries(search).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  return <ConsoleView initial={initial} params={consoleParams()} />;
}
