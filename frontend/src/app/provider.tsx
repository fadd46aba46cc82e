import { QueryClientProvider } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { PushChannel } from './push-provider';
import { queryClient } from './query-client';

export function AppProvider({ children }: { children: ReactNode }) {
  return (
    <QueryClientProvider client={queryClient}>
      <PushChannel />
      {children}
    </QueryClientProvider>
  );
}
