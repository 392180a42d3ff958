import { connection } from 'next/server';
import { SignInView } from '@/components/pages/sign-in-view';
import { authEnabled } from '@/lib/http/auth';
import { appPath } from '@/lib/http/app-path';

export const metadata = { title: 'Sign in' };

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string | string[] }> }) {
  await connection();
  const next = (await searchParams).next;
  // only a path of this dashboard: never an open redirect to another site
  return <SignInView next={appPath(next)} authOff={!authEnabled()} />;
}
