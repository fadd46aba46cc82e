import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { connectPush } from '@/lib/push';

/**
 * Keeps the one push channel (lib/push.ts) open while this browser may read (signed in, or public
 * reads); it opens once the layout's session read says so, and closes on sign-out. Until then, and
 * whenever it is down, pages fall back to their timers.
 */
export function PushChannel() {
  const client = useQueryClient();
  // Only reads the session the layout asks for: this observer never fetches.
  const mayRead =
    useQuery({
      queryKey: ['session'],
      enabled: false,
      select: (s: { authenticated: boolean; public_read: boolean }) => s.authenticated || s.public_read,
    }).data === true;
  useEffect(() => (mayRead ? connectPush(client) : undefined), [client, mayRead]);
  return null;
}
