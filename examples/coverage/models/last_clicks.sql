-- Window deduplication keeping the last row: each visitor's last click of every ten
-- minutes, inserted when the ten minutes close. Of clicks at the same time, the last to
-- arrive. The window's time comes out too: it is the rows' time attribute from here on.
-- The row number, selected, is 1 on every row: Flink deduplicates all the same.
SELECT visitor, page, clicked_at, window_start, window_end, window_time, rn
FROM (
  SELECT *, ROW_NUMBER() OVER (
    PARTITION BY window_start, window_end, visitor
    ORDER BY clicked_at DESC
  ) AS rn
  FROM TABLE(TUMBLE(TABLE source('clicks'), DESCRIPTOR(clicked_at), INTERVAL '10' MINUTE))
  WHERE visitor IS NOT NULL
)
WHERE rn = 1
