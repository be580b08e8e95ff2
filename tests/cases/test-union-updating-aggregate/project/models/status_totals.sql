-- Orders per status from a stream of shop orders and a table of orders whose status
-- changes: the union passes the table's updates and deletes on, and the aggregate takes
-- them back.
SELECT status, COUNT(*) AS orders, SUM(amount) AS amount
FROM (
  SELECT order_id, status, amount FROM source('shop_orders')
  UNION ALL
  SELECT order_id, status, amount FROM source('order_status')
) AS all_orders
GROUP BY status
