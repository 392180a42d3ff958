import { connection } from 'next/server';
import { SignInView } from '@/components/pages/sign-in-view';
import { authEnabled } from '@/lib/broker/auth';

export const metadata = { title: 'Sign in' };

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string | string[] }> }) {
  await connection();
  const next = (await searchParams).next;
  // only a path of this dashboard: never an open redirect to another site
  const to = typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
  return <SignInView next={to} authOff={!authEnabled()} />;
}
