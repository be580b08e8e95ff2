-- Orders from both shops as one stream: every order of each, marked with where it came
-- from. The two SELECTs give their columns the same types, in the same order.
SELECT order_id, customer_id, amount, ordered_at, 'web' AS channel
FROM source('web_orders')
UNION ALL
SELECT order_id, customer_id, amount, ordered_at, 'mobile' AS channel
FROM source('app_orders')
