SELECT order_id, amount, ts FROM source('web_orders')
UNION ALL
SELECT order_id, amount, ts FROM source('app_orders')
