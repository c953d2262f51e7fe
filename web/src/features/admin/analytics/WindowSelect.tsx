import { useI18n } from '../../../i18n';
import { Select } from '../../../ui';

/** A choice of report window among `options` (in `unit`). */
export function WindowSelect({
  label,
  value,
  onChange,
  options,
  unit,
}: {
  label: string;
  value: number;
  onChange: (n: number) => void;
  options: number[];
  unit: 'hours' | 'days';
}) {
  const { tn } = useI18n();
  return (
    <Select
      label={label}
      value={String(value)}
      onChange={(v) => onChange(Number(v))}
      options={options.map((n) => ({
        value: String(n),
        label: unit === 'hours' ? tn('Last {n} hour', 'Last {n} hours', n) : tn('Last {n} day', 'Last {n} days', n),
      }))}
    />
  );
}
