import { MissingView } from '@/components/pages/missing-view';

export default function NotFound() {
  return <MissingView kind="queue" />;
}
