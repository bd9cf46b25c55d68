/** A select as wide as its longest choice, for the pickers above a chart or a table. */
import { Select } from '@shopify/polaris';

export function NarrowSelect<Value extends string>({
  label,
  options,
  value,
  onChange,
}: {
  label: string;
  options: { label: string; value: Value }[];
  value: Value;
  onChange: (value: Value) => void;
}) {
  return (
    <div className="vd-range-select">
      <Select label={label} options={options} value={value} onChange={(v) => onChange(v as Value)} />
    </div>
  );
}
