import type { Metadata } from 'next';
import { connection } from 'next/server';
import { HydrationMark } from '@/components/hydration-mark';
import './globals.css';

export const metadata: Metadata = {
  // every page names itself first ("Leases · Queen"), so tabs and history tell pages apart
  title: { template: '%s · Queen', default: 'Queen — broker and operator dashboard' },
  description: 'A lease-based partitioned message queue on PostgreSQL',
};

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  // Rendered per request, never prerendered: every page carries its own CSP nonce (proxy.ts).
  await connection();
  return (
    <html lang="en">
      <body className="min-h-screen bg-white text-zinc-900 antialiased dark:bg-zinc-950 dark:text-zinc-100">
        {children}
        <HydrationMark />
      </body>
    </html>
  );
}
