SELECT COUNT(*) AS orders, customer_id FROM source('orders') GROUP BY 2
