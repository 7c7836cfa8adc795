/**
 * The SMTP conversation of a verification (docs/api.md, "The SMTP conversation"), behind a
 * disclosure button: "Show the SMTP conversation" (aria-expanded, aria-controls the list), then
 * the list "SMTP conversation", one item per line: the time since the start, who spoke ("sent" or
 * "received", as a hidden word beside the arrow), the line. Markers (`[connect …]`) stand apart.
 */
import { useId, useState } from 'react';
import type { TranscriptLine } from '../api/contract';

export function SmtpConversation({ lines }: { lines: TranscriptLine[] }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  return (
    <div className="conversation">
      <button
        type="button"
        className="button button-small"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen((value) => !value)}
      >
        <span aria-hidden="true">{open ? '▾ ' : '▸ '}</span>
        Show the SMTP conversation
      </button>
      <div id={id} hidden={!open}>
        {lines.length === 0 ? (
          <p className="muted small">No mail server was asked, so nothing was said.</p>
        ) : (
          <ol className="conversation-lines" aria-label="SMTP conversation">
            {lines.map((line, i) => (
              <li
                key={i}
                className={line.text.startsWith('[') ? 'conversation-marker' : `conversation-${line.dir}`}
              >
                <span className="conversation-time">+{line.at_ms} ms</span>
                <span className="conversation-dir" aria-hidden="true">
                  {line.dir === 'out' ? '→' : '←'}
                </span>
                <span className="sr-only">{line.dir === 'out' ? 'sent' : 'received'}: </span>
                <span className="mono conversation-text">{line.text}</span>
              </li>
            ))}
          </ol>
        )}
      </div>
    </div>
  );
}
