import { BlockStack, InlineStack, Text, TextField } from '@shopify/polaris';

import { NarrowSelect } from './NarrowSelect';
import { formatDay, PRESETS, rangeErrors, type DateRange, type Preset } from '../dates';

/**
 * The analytics range: a preset (whole days ending today in the shop's timezone) or two dates.
 * A custom range takes effect as soon as both dates are valid.
 */
export function RangePicker({
  preset,
  custom,
  range,
  timeZone,
  onPreset,
  onCustom,
}: {
  preset: Preset;
  custom: DateRange;
  /** The range the page shows now. */
  range: DateRange;
  timeZone: string;
  onPreset: (preset: Preset) => void;
  onCustom: (range: DateRange) => void;
}) {
  const errors = preset === 'custom' ? rangeErrors(custom) : {};
  return (
    <BlockStack gap="200">
      <InlineStack gap="300" blockAlign="end" wrap>
        <NarrowSelect
          label="Date range"
          options={PRESETS.map((p) => ({ label: p.label, value: p.value }))}
          value={preset}
          onChange={onPreset}
        />
        {preset === 'custom' && (
          <>
            <div className="vd-date-field">
              <TextField
                label="Start date"
                type="date"
                autoComplete="off"
                value={custom.start}
                max={custom.end || undefined}
                onChange={(start) => onCustom({ ...custom, start })}
                error={errors.start}
              />
            </div>
            <div className="vd-date-field">
              <TextField
                label="End date"
                type="date"
                autoComplete="off"
                value={custom.end}
                min={custom.start || undefined}
                onChange={(end) => onCustom({ ...custom, end })}
                error={errors.end}
              />
            </div>
          </>
        )}
      </InlineStack>
      <Text as="p" tone="subdued">
        {range.start === range.end ? formatDay(range.start) : `${formatDay(range.start)} – ${formatDay(range.end)}`}, in your store&apos;s
        time zone ({timeZone}).
      </Text>
    </BlockStack>
  );
}
