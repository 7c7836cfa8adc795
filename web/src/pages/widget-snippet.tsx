/**
 * Publishable keys on the keys page (docs/widget.md): the create dialog's fields (a checkbox
 * "Publishable key for web pages" and the field "Allowed origins", one per line), and the widget's
 * snippet with its integrity hash, shown with a new publishable key's secret (region "Widget
 * snippet", field "Snippet", button "Copy").
 */
import type { KeyList } from '../api/contract';
import { CopyButton } from '../components/copy-button';
import { Choice } from '../components/choice';

export interface PublishableDraft {
  on: boolean;
  origins: string;
}

/** The origins typed, one per line (blank lines dropped). */
export const originsOf = (draft: PublishableDraft): string[] =>
  draft.origins
    .split(/\s+/)
    .map((o) => o.trim())
    .filter((o) => o !== '');

export function PublishableFields({
  draft,
  onChange,
}: {
  draft: PublishableDraft;
  onChange: (draft: PublishableDraft) => void;
}) {
  return (
    <fieldset className="fieldset">
      <legend>Web pages</legend>
      <Choice
        type="checkbox"
        label="Publishable key for web pages"
        hint="verify only, from the origins below, limited per visitor and per day; for the signup-form widget"
        checked={draft.on}
        onChange={(on) => onChange({ ...draft, on })}
      />
      {draft.on ? (
        <div className="field">
          <label htmlFor="key-origins">Allowed origins</label>
          <textarea
            id="key-origins"
            className="input mono"
            rows={3}
            value={draft.origins}
            onChange={(event) => onChange({ ...draft, origins: event.target.value })}
            aria-describedby="key-origins-hint"
            spellCheck={false}
          />
          <p id="key-origins-hint" className="hint">
            One per line: scheme, host and port, e.g. https://shop.example (no path, no wildcard).
          </p>
        </div>
      ) : null}
    </fieldset>
  );
}

/** The script tag a page adds to use the widget with this key. */
export function snippetFor(widget: NonNullable<KeyList['widget']>, secret: string): string {
  return [
    `<script src="${widget.url}" integrity="${widget.integrity}" crossorigin="anonymous"`,
    `  data-key="${secret}" defer></script>`,
    '<input type="email" name="email" autocomplete="email" data-mailverdict>',
  ].join('\n');
}

export function WidgetSnippet({ widget, secret }: { widget: KeyList['widget']; secret: string }) {
  if (widget === null)
    return (
      <p className="notice notice-info">The widget is not built in this installation (npm run build).</p>
    );
  const snippet = snippetFor(widget, secret);
  return (
    <section aria-labelledby="widget-snippet-title">
      <h3 id="widget-snippet-title">Widget snippet</h3>
      <p className="hint">
        Add it to the signup page; the integrity hash pins this build of the widget (copy the snippet again
        after upgrading mailverdict).
      </p>
      <label htmlFor="widget-snippet">Snippet</label>
      <textarea
        id="widget-snippet"
        className="input mono"
        rows={4}
        readOnly
        value={snippet}
        spellCheck={false}
      />
      <CopyButton text={snippet} />
    </section>
  );
}
