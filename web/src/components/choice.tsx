import { useId } from 'react';

/** A radio button or checkbox named by `label` alone; `hint` is its description, not its name. */
export function Choice({
  type,
  name,
  label,
  hint,
  checked,
  onChange,
  inline = false,
}: {
  type: 'radio' | 'checkbox';
  name?: string;
  label: React.ReactNode;
  hint?: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  inline?: boolean;
}) {
  const id = useId();
  return (
    <div className={inline ? 'choice choice-inline' : 'choice'}>
      <input
        id={id}
        type={type}
        name={name}
        checked={checked}
        onChange={(event) => onChange(event.target.checked)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <span id={`${id}-hint`} className="hint">
          {hint}
        </span>
      ) : null}
    </div>
  );
}
