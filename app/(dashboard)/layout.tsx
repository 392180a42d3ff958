import { MaintenanceBanner } from '@/components/maintenance';
import { Nav } from '@/components/nav';
import { Providers } from '@/components/providers';
import { ReplicaBanner } from '@/components/replica';
import { Announcements } from '@/components/reason-dialog';

export default function DashboardLayout({ children }: { children: React.ReactNode }) {
  return (
    <Providers>
      <a
        href="#main"
        className="sr-only rounded bg-white px-3 py-2 font-medium text-sky-800 ring-2 ring-sky-600 focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-50 dark:bg-zinc-900 dark:text-sky-300"
      >
        Skip to content
      </a>
      <MaintenanceBanner />
      <ReplicaBanner />
      <Nav />
      <main id="main" tabIndex={-1} className="mx-auto max-w-7xl px-4 py-5 outline-none">
        {children}
      </main>
      <Announcements />
    </Providers>
  );
}
