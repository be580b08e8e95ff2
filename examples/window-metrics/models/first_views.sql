-- Each user's first page view of each minute: a window deduplication over the window
-- table, inserted once the minute closes. Of views at the same time, the first to arrive.
SELECT user_id, page, viewed_at, window_start, window_end
FROM (
  SELECT *, ROW_NUMBER() OVER (
    PARTITION BY window_start, window_end, user_id
    ORDER BY viewed_at
  ) AS rn
  FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
)
WHERE rn = 1
