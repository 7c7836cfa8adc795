import { useEffect, useState } from 'react';

/** Copies `text` to the clipboard and says so ("Copied") where a screen reader hears it. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = window.setTimeout(() => setState('idle'), 4000);
    return () => window.clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span className="copy">
      <button type="button" className="button" onClick={() => void copy()}>
        {label}
      </button>
      <span role="status" className="copy-status">
        {state === 'copied'
          ? 'Copied'
          : state === 'failed'
            ? 'Could not copy: select the text and copy it'
            : ''}
      </span>
    </span>
  );
}

/** A secret or a link shown read-only, selectable, with a copy button. */
export function CopyField({ label, value, id }: { label: string; value: string; id: string }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="copy-field">
        <input
          id={id}
          className="input mono"
          readOnly
          value={value}
          onFocus={(event) => event.currentTarget.select()}
          spellCheck={false}
        />
        <CopyButton text={value} />
      </div>
    </div>
  );
}
