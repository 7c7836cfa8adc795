/**
 * What the pages need from the outside world, passed down once: the API client and the list
 * parser (in a worker in the app, in-thread in component tests). No module-level singletons.
 */
import { createContext, useContext, type ReactNode } from 'react';
import type { ListParserFactory } from '../lists/parser';
import type { ApiClient } from './client';

export interface Services {
  api: ApiClient;
  listParser: ListParserFactory;
}

const ServicesContext = createContext<Services | null>(null);

export function ServicesProvider({ services, children }: { services: Services; children: ReactNode }) {
  return <ServicesContext.Provider value={services}>{children}</ServicesContext.Provider>;
}

export function useServices(): Services {
  const services = useContext(ServicesContext);
  if (!services) throw new Error('useServices outside <ServicesProvider>');
  return services;
}

export function useApi(): ApiClient {
  return useServices().api;
}
