/**
 * Renders the whole app (routes, shell, providers, the real API client) at a path, against a
 * FakeServer, with the list parser running in-thread. Returns the user-event driver and the
 * memory location so a test can check where the app went.
 */
import { render } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { memoryLocation } from 'wouter/memory-location';
import { AppRoot, createQueryClient, createServices } from '../app';
import { inlineListParser } from '../lists/inline-parser';
import { FakeServer } from './fake-server';

export function renderApp(path: string, server: FakeServer = new FakeServer()) {
  const location = memoryLocation({ path, record: true });
  const client = createQueryClient();
  const services = createServices(client, server.fetch, inlineListParser);
  const user = userEvent.setup();
  const view = render(
    <AppRoot client={client} services={services} location={location.hook} searchHook={location.searchHook} />,
  );
  /** The path the app is at now. */
  const at = () => location.history.at(-1) ?? path;
  return { ...view, user, server, client, location, at };
}
