import { MaintenanceBanner } from '@/components/maintenance';
import { Nav } from '@/components/nav';
import { Providers } from '@/components/providers';

export default function DashboardLayout({ children }: { children: React.ReactNode }) {
  return (
    <Providers>
      <MaintenanceBanner />
      <Nav />
      <main className="mx-auto max-w-7xl px-4 py-5">{children}</main>
    </Providers>
  );
}
