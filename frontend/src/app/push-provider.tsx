import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { connectPush } from '@/lib/push';

/**
 * Keeps the one push channel (lib/push.ts) open while the app runs; opens it again at once when the
 * browser signs in (a signed-out browser's stream is refused with 401, then retried slowly).
 */
export function PushChannel() {
  const client = useQueryClient();
  // Only reads the session the layout asks for: this observer never fetches.
  const signedOut =
    useQuery({
      queryKey: ['session'],
      enabled: false,
      select: (s: { authenticated: boolean; public_read: boolean }) => !s.authenticated && !s.public_read,
    }).data === true;
  useEffect(() => (signedOut ? undefined : connectPush(client)), [client, signedOut]);
  return null;
}
