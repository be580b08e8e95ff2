SELECT
    id,
    note,
    note = 'vip' AS is_vip,
    qty = 2 AS qty_is_two,
    qty <> 2 AS qty_is_not_two,
    qty < 3 AS qty_below_three,
    qty <= 3 AS qty_at_most_three,
    big > 10 AS big_above_ten,
    big >= 10 AS big_at_least_ten,
    flag AND (qty > 1) AS flagged_and_many,
    flag OR (qty >= 3) AS flagged_or_many,
    NOT flag AS not_flagged,
    flag = FALSE AS flag_is_false,
    note IS NULL AS note_missing,
    ratio IS NOT NULL AS has_ratio,
    qty <> 0 AND big / qty > 3 AS over_three_each,
    qty = 0 OR big / qty > 3 AS none_or_over_three_each
FROM source('events')
WHERE id <> 99
  AND (flag = TRUE OR note IS NOT NULL)
  AND NOT (qty > 5)
  -- The widest literals Flink reads: their digits, the point left out, within a BIGINT.
  AND qty > -9223372036854775808
  AND qty < 922337203685477580.7
  AND qty > -922337203685477580.8
