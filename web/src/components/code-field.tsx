/**
 * The field for a one-time code (a TOTP code or a recovery code): the sign-in's second step,
 * turning two-factor sign-in on, and turning it off.
 */
export function CodeField({
  id,
  label,
  value,
  onChange,
  inputMode,
  required = false,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** `numeric` where only an app's 6 digits are taken; `text` where a recovery code is too. */
  inputMode?: 'numeric' | 'text';
  required?: boolean;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        className="input mono"
        type="text"
        inputMode={inputMode}
        autoComplete="one-time-code"
        required={required}
        spellCheck={false}
        value={value}
        onChange={(event) => onChange(event.target.value)}
      />
    </div>
  );
}
