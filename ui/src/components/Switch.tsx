interface SwitchProps {
  id: string;
  label: string;
  description: string;
  checked: boolean;
  busy?: boolean;
  onChange: (checked: boolean) => void;
}

/** An on/off setting: a checkbox with the switch role, its label and what it does. */
export function Switch({ id, label, description, checked, busy, onChange }: SwitchProps) {
  return (
    <div class="switch-row">
      <div class="switch-text">
        <label for={id}>{label}</label>
        <p id={`${id}-description`} class="field-hint">
          {description}
        </p>
      </div>
      <input
        id={id}
        type="checkbox"
        role="switch"
        class="switch"
        checked={checked}
        disabled={busy}
        aria-describedby={`${id}-description`}
        onChange={(event) => onChange(event.currentTarget.checked)}
      />
    </div>
  );
}
