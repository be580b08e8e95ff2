-- An OVER aggregation in rows back to the first row: each click with how many pages its
-- visitor has clicked so far and the first of them by name. Clicks of one instant are
-- counted one by one, in the order they came; a click without a page counts for nothing,
-- and clicks without a visitor are a partition of their own.
SELECT
  visitor,
  page,
  clicked_at,
  COUNT(page) OVER visits AS pages_so_far,
  MIN(page) OVER visits AS first_page_by_name
FROM source('clicks')
WINDOW visits AS (
  PARTITION BY visitor
  ORDER BY clicked_at
  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
)
