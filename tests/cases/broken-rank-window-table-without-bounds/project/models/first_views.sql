-- Each user's first view, meant per minute, but partitioned by the user only.
SELECT user_id, page, viewed_at
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY viewed_at) AS rn
  FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
)
WHERE rn = 1
